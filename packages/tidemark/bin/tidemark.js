#!/usr/bin/env node
// The `tidemark` command of the umbrella package is @tidemark/cli's, run as is.
import '@tidemark/cli/bin';
