// Subagents do not inherit the parent's tools; re-export the same search.
export { default } from "../../../tools/search";
