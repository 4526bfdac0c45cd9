// typescript-eslint's recommended type-aware rules over the TypeScript sources (`npm run lint:code`).
import tseslint from "typescript-eslint";

export default tseslint.config(
  { ignores: ["dist/", "typechain-types/", "artifacts/", "cache/", "node_modules/", "client/schema.d.ts", "coverage/", "test-artifacts/", ".data/"] },
  {
    files: ["**/*.ts"],
    extends: [tseslint.configs.recommendedTypeChecked],
    languageOptions: { parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname } },
  },
);
