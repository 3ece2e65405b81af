// `npm run schema:print`: the subgraph SDL exactly as the router fetches it (`_service { sdl }`:
// Federation 2, `extend schema @link(…)`), ready for
// `rover subgraph publish <graph>@<variant> --name bank --schema <(npm run -s schema:print)`.
import { graphql } from 'graphql';
import { createSubgraphSchema } from '../src/schema.ts';

const result = await graphql({ schema: createSubgraphSchema(), source: '{ _service { sdl } }' });
if (result.errors?.length) {
  console.error(result.errors.map((error) => error.message).join('\n'));
  process.exit(1);
}
process.stdout.write(`${(result.data as { _service: { sdl: string } })._service.sdl.trim()}\n`);
