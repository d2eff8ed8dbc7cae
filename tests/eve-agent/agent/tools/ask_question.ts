// eve's opt-in question tool (`eve add tool/ask_question` writes exactly this).
import { askQuestion } from "eve/tools/ask_question";

export default askQuestion;
