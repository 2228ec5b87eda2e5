import { defineConfig } from 'drizzle-kit';

// Generation only needs the schema; no database connection.
export default defineConfig({
  dialect: 'postgresql',
  schema: './src/schema.ts',
  out: './drizzle',
  schemaFilter: ['public'],
});
