// One linter for the whole tree: TypeScript, Astro components, React islands (hooks, accessibility); Prettier owns formatting.
import js from '@eslint/js';
import prettier from 'eslint-config-prettier';
import astro from 'eslint-plugin-astro';
import jsxA11y from 'eslint-plugin-jsx-a11y';
import reactHooks from 'eslint-plugin-react-hooks';
import globals from 'globals';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['dist/', '.out/', '.astro/', 'node_modules/', 'data/', 'bench/results/', 'test-results/', 'playwright-report/', 'public/'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  ...astro.configs.recommended,
  prettier,
  {
    languageOptions: { globals: { ...globals.node, ...globals.browser } },
    rules: {
      // An unused binding is dead code; a leading underscore marks one that must exist (a positional parameter).
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrors: 'none' }],
      '@typescript-eslint/consistent-type-imports': 'error',
      // What Prettier cannot wrap (long strings, URLs, regular expressions) still has a limit.
      'max-len': [
        'error',
        {
          code: 140,
          ignoreUrls: true,
          ignoreStrings: true,
          ignoreTemplateLiterals: true,
          ignoreRegExpLiterals: true,
          ignoreComments: false,
        },
      ],
    },
  },
  {
    // Markup in .astro files is Prettier's to wrap (it fills prose to about the print width, a few characters over at times), so
    // the line limit covers TypeScript and JavaScript, where Prettier leaves long comments and strings as they are.
    files: ['**/*.astro'],
    rules: { 'max-len': 'off' },
  },
  {
    // Astro compiles a component's frontmatter into a function whose render state is `$$result`; the render twins hand it to
    // renderCspAsMeta.
    files: ['**/*.astro'],
    languageOptions: { globals: { $$result: 'readonly' } },
  },
  {
    files: ['**/*.tsx'],
    plugins: { 'react-hooks': reactHooks, 'jsx-a11y': jsxA11y },
    rules: {
      ...reactHooks.configs.recommended.rules,
      ...jsxA11y.flatConfigs.recommended.rules,
      // A <pre> that scrolls must take keyboard focus, or keyboard users cannot scroll it (axe: scrollable-region-focusable).
      'jsx-a11y/no-noninteractive-tabindex': ['error', { tags: ['pre'], roles: ['tabpanel'] }],
    },
  },
);
