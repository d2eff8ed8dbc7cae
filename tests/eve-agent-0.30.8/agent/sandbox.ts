// eve's default backend picks Docker or microsandbox here (neither can run
// offline on the test machine); just-bash is pure JavaScript and needs
// nothing from outside. The scripted agent never runs a shell command.
// (0.30.8 selects a backend on defineSandbox; later releases use
// JustBashSandbox.environment().)
import { defineSandbox } from "eve/sandbox";
import { justbash } from "eve/sandbox/just-bash";

export default defineSandbox({ backend: justbash({ autoInstall: false }) });
