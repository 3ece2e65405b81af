// `npm run schema:print`: the subgraph SDL (Federation 2, @link), ready for
// `rover subgraph publish <graph>@<variant> --name bank --schema <(npm run -s schema:print)`.
import { printSubgraphSchema } from '@apollo/subgraph';
import { createSubgraphSchema } from '../src/schema.ts';

process.stdout.write(`${printSubgraphSchema(createSubgraphSchema())}\n`);
