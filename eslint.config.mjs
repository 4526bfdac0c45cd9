// `npm run lint:code`: typescript-eslint's recommended type-aware rules over every TypeScript source.
import tseslint from "typescript-eslint";

export default tseslint.config(
  {
    ignores: [
      "dist/",
      "typechain-types/",
      "artifacts/",
      "cache/",
      "node_modules/",
      "client/schema.d.ts",
      "client/dist/",
      "coverage/",
      "test-artifacts/",
      ".data/",
    ],
  },
  {
    files: ["**/*.ts"],
    extends: [tseslint.configs.recommendedTypeChecked],
    languageOptions: { parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname } },
    rules: {
      // `any` enters at boundaries that are validated at run time rather than typed: rows read back from the database,
      // decoded contract results (ethers' Result), and in tests the JSON answers, each checked against its OpenAPI
      // schema (test/helpers/documented.ts). The rules that track `any` through the code would flag every use there.
      "@typescript-eslint/no-explicit-any": "off",
      "@typescript-eslint/no-unsafe-argument": "off",
      "@typescript-eslint/no-unsafe-assignment": "off",
      "@typescript-eslint/no-unsafe-call": "off",
      "@typescript-eslint/no-unsafe-member-access": "off",
      "@typescript-eslint/no-unsafe-return": "off",
      // Route handlers, method plans and test doubles are async to satisfy a Promise-returning interface (and to turn
      // a throw into a rejection) whether or not they await.
      "@typescript-eslint/require-await": "off",
      // `_name` marks a parameter a signature requires but the body does not use.
      "@typescript-eslint/no-unused-vars": [
        "error",
        { argsIgnorePattern: "^_", varsIgnorePattern: "^_", caughtErrors: "none" },
      ],
    },
  },
);
