// The release's question tool. In 0.64.1 it is a default tool already;
// `askQuestion` is the tool itself (no factory as in 0.80.1), so re-export it
// to make the dependency explicit.
export { default } from "eve/tools/ask_question";
