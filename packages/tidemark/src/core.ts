/** `@tidemark/core`, re-exported as `tidemark/core`. */
export * from '@tidemark/core';
