// eve's default sandbox picks Docker or microsandbox here (neither can run
// offline on the test machine); just-bash is pure JavaScript and needs
// nothing from outside. The scripted agent never runs a shell command.
import { defineSandbox } from "eve/sandbox";
import { JustBashSandbox } from "eve/sandbox/just-bash";

export const environment = JustBashSandbox.environment({ autoInstall: false });
export default defineSandbox(() => environment.open());
