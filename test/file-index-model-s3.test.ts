/** The data-file index against a model (test/support/file-index-model.ts) on S3. */
import { fileIndexModelSuite } from './support/file-index-model.js';

fileIndexModelSuite('S3');
