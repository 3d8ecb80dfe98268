/** `@tidemark/format`, re-exported as `tidemark/format`. */
export * from '@tidemark/format';
