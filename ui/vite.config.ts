import { defineConfig } from "vitest/config";
import { svelte } from "@sveltejs/vite-plugin-svelte";

// The app loads the built files through Tauri's custom protocol; no dev server is
// needed to run or test it.
export default defineConfig({
  plugins: [svelte()],
  clearScreen: false,
  build: {
    target: "safari15",
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
