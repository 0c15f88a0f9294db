#!/bin/sh
# The production install, from a checkout: the build with the whole toolchain, then DEST holding only what
# runs the service (the compiled code, the migrations and the production dependencies, no dev tooling).
# The Dockerfile's build stage runs this script and nothing else, and test/deploy-files.test.ts runs it in a
# clean clone and starts the server from DEST: the image's steps are the tested ones.
#
#   scripts/production-install.sh DEST      (DEST: a folder that does not exist yet)
#   cd DEST && NODE_ENV=production node --enable-source-maps dist/main.js      (or dist/worker.js, dist/cli/migrate.js)
set -eu

if [ "$#" -ne 1 ]; then
  echo "usage: scripts/production-install.sh DEST (a folder that does not exist yet)" >&2
  exit 2
fi
if [ -e "$1" ]; then
  echo "$1 exists: the production install goes into a new folder" >&2
  exit 2
fi
mkdir -p "$1"
dest=$(cd "$1" && pwd)
cd "$(dirname "$0")/.."

npm ci --no-audit --no-fund
node scripts/build.mjs

# dist is a symlink to the build (.dist-<hash>/): copied as a plain folder. The migrations are read from
# beside it (src/platform/db/migrations.ts), and package.json makes the compiled files ES modules.
cp -RL dist "$dest/dist"
cp -R drizzle package.json package-lock.json "$dest/"
cd "$dest"
npm ci --omit=dev --no-audit --no-fund
