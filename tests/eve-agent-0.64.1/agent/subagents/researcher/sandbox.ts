// The researcher shares its parent's (just-bash) sandbox.
import { defineParentSandbox } from "eve/sandbox";

export default defineParentSandbox();
