import { defineConfig } from "vitest/config";
import { svelte } from "@sveltejs/vite-plugin-svelte";

// The app loads the built files through Tauri's custom protocol; no dev server is
// needed to run or test it.
export default defineConfig({
  plugins: [svelte()],
  clearScreen: false,
  build: {
    // WebKitGTK 2.40 (the oldest the app runs on: it sets the web processes' memory
    // policy through 2.40's API) has Safari 16.4's JavaScript. An older target rewrote
    // Svelte's private class fields into WeakMap helpers, which its runtime calls on
    // every update: the idle window's web process was 3 MB larger, and its start put
    // one of them through the optimising JIT.
    target: "safari16.4",
    outDir: "dist",
    emptyOutDir: true,
    // Keeps the CSP simple: no inline module preload polyfill.
    modulePreload: { polyfill: false },
  },
  test: {
    include: ["src/**/*.test.ts"],
    environment: "node",
  },
});
