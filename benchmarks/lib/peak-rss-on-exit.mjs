// Preloaded (`node --import`) into a measured process: writes its peak RSS in KiB to the file named
// by TIDEMARK_PEAK_RSS_FILE when it exits, so a benchmark can report the memory of a CLI command.
import { writeFileSync } from 'node:fs';

const file = process.env.TIDEMARK_PEAK_RSS_FILE;
if (file) process.on('exit', () => writeFileSync(file, String(process.resourceUsage().maxRSS)));
