/**
 * The circle rule between folders (modules, and the platform's parts), run by `npm run lint` after
 * .dependency-cruiser.cjs, over src without its tests. It is a run of its own because dependency-cruiser
 * builds the folder graph from every file it cruises and cannot leave files out for one rule: a test sits
 * in its module's folder and imports test/helpers, which import every module, so with the tests in the
 * graph every module folder would be in a circle with every other.
 */
const { options } = require('./.dependency-cruiser.cjs')

module.exports = {
  forbidden: [
    {
      name: 'no-circular-folders',
      severity: 'error',
      scope: 'folder',
      comment:
        'Modules depend on each other in one direction (reviews uses email; email knows nothing of ' +
        'reviews), even where no two files form a circle: two modules that use each other are one module ' +
        'in two folders, neither can be understood, tested or split off alone. A page or a job that needs ' +
        'both belongs in a third module that imports the two (the outbox page reads email and reviews).',
      from: { path: '^src/' },
      to: { path: '^src/', circular: true },
    },
  ],
  options: {
    ...options,
    exclude: { path: [options.exclude.path, '\\.test\\.ts$', '^test/'] },
  },
}
