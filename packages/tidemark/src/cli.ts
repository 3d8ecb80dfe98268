/** `@tidemark/cli`, re-exported as `tidemark/cli`. */
export * from '@tidemark/cli';
