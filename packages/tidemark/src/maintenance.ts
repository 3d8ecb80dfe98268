/** `@tidemark/maintenance`, re-exported as `tidemark/maintenance`. */
export * from '@tidemark/maintenance';
