/** `@tidemark/storage`, re-exported as `tidemark/storage`. */
export * from '@tidemark/storage';
