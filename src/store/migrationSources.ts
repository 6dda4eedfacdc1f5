// Every domain's migration folder, in dependency order (DESIGN.md: products → grid → meter; auth
// first). Here rather than in the wiring file so that the command-line tools and the test set-up
// migrate a database without loading every domain.
import type { MigrationSource } from './migrate.ts';

export const MIGRATIONS: readonly MigrationSource[] = [
  { domain: 'platform', dir: 'src/store/migrations' },
  { domain: 'auth', dir: 'src/auth/migrations' },
  { domain: 'meter', dir: 'src/meter/migrations' },
  { domain: 'grid', dir: 'src/grid/migrations' },
  { domain: 'products', dir: 'src/products/migrations' },
  { domain: 'vtn', dir: 'src/vtn/migrations' },
];
