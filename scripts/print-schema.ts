// `npm run schema:print`: the subgraph SDL exactly as the router fetches it (`_service { sdl }`:
// Federation 2, `extend schema @link(…)`), ready for
// `rover subgraph publish <graph>@<variant> --name bank --schema <(npm run -s schema:print)`.
// The bank catalogue's cache maxAge is part of that SDL, and PUBLISH_ACCESS_DIRECTIVES decides whether the
// access directives are, so both are read as the server reads them: `.env` first, then the environment.
import { existsSync } from 'node:fs';
import { graphql } from 'graphql';
import { loadSchemaSettings } from '../src/config/index.ts';
import { exitOnConfigError } from '../src/lifecycle.ts';
import { createSubgraphSchema } from '../src/schema.ts';

if (existsSync('.env')) process.loadEnvFile('.env');
const { catalogueMaxAgeS, publishAccessDirectives } = exitOnConfigError(() => loadSchemaSettings(process.env));
const result = await graphql({
  schema: createSubgraphSchema({ catalogueMaxAgeS, publishAccessDirectives }),
  source: '{ _service { sdl } }',
});
if (result.errors?.length) {
  console.error(result.errors.map((error) => error.message).join('\n'));
  process.exit(1);
}
process.stdout.write(`${(result.data as { _service: { sdl: string } })._service.sdl.trim()}\n`);
