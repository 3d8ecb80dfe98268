/** `@tidemark/sink`, re-exported as `tidemark/sink`. */
export * from '@tidemark/sink';
