import { execFileSync } from 'node:child_process'
import { PROJECT_ROOT } from './npm-scripts.js'

/** vitest globalSetup: compiles dist/ once (`npm run build`), for the tests that start the real processes. */
export default function setup(): void {
  execFileSync(process.execPath, ['scripts/build.mjs'], { cwd: PROJECT_ROOT, stdio: 'inherit' })
}
