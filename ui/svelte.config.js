import { vitePreprocess } from "@sveltejs/vite-plugin-svelte";

export default {
  preprocess: vitePreprocess(),
  compilerOptions: {
    // Component CSS goes to a file: the CSP allows no inline styles.
    css: "external",
  },
};
