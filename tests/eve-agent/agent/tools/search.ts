import { searchTool } from "../lib/sources";

export default searchTool;
