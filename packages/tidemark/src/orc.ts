/** `@tidemark/orc`, re-exported as `tidemark/orc`. */
export * from '@tidemark/orc';
