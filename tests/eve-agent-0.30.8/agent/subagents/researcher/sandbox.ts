// A declared subagent has its own sandbox in 0.30.8 (no parent-sandbox
// helper yet): the same offline just-bash backend as the root.
import { defineSandbox } from "eve/sandbox";
import { justbash } from "eve/sandbox/just-bash";

export default defineSandbox({ backend: justbash({ autoInstall: false }) });
