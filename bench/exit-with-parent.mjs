/**
 * Preloaded (`--import`) into every child of the bench: when the bench dies, even by SIGKILL, its end
 * of the IPC channel closes, and the child is sent the SIGTERM the bench would have sent. Plain
 * JavaScript: the server runs as `npm start` runs it, without a TypeScript loader.
 */
process.on('disconnect', () => process.kill(process.pid, 'SIGTERM'))
