/** The data-file index against a model (test/support/file-index-model.ts) on local disk. */
import { fileIndexModelSuite } from './support/file-index-model.js';

fileIndexModelSuite('local disk');
