// The release's own question tool (opt-in in this release).
import { askQuestion } from "eve/tools/ask_question";

export default askQuestion();
