// The released OpenADR documents (shared/spec/openadr-<version>.yaml) as validators: their
// component schemas, loaded with a YAML library and compiled with Ajv, check what the VTN serves.
import fs from 'node:fs';
import path from 'node:path';
import { Ajv } from 'ajv';
import addFormatsModule from 'ajv-formats';
import { parse } from 'yaml';
import { projectRoot } from '../../src/store/migrate.ts';

const addFormats = ((addFormatsModule as unknown as { default?: unknown }).default ?? addFormatsModule) as unknown as (ajv: Ajv) => Ajv;

/** What is wrong with `value` as the document's `components/schemas/<kind>` (empty: valid). */
export type SpecCheck = (kind: string, value: unknown) => string[];

/** The document's path: beside the repository (shared/spec), where CI's clone has it too;
 * undefined when it is missing (the conformance tests are then skipped). */
export function openAdrSpecPath(version: '3.0.1' | '3.1.0'): string | undefined {
  const file = `openadr-${version}.yaml`;
  return [path.join(projectRoot(), '../shared/spec', file), path.join('/work/shared/spec', file)].find((p) => fs.existsSync(p));
}

export function readSpecComponents(specPath: string): { schemas: Record<string, any> } {
  return (parse(fs.readFileSync(specPath, 'utf8')) as { components: { schemas: Record<string, any> } }).components;
}

/** Compiles a document's components. OpenAPI 3.0 schemas: `nullable` is understood by Ajv;
 * `example` and `discriminator` are annotations here (the discriminator sits beside anyOf, which
 * Ajv's discriminator refuses). */
export function specCheck(id: string, components: unknown): SpecCheck {
  const ajv = new Ajv({ strict: false, allErrors: true, logger: false });
  addFormats(ajv);
  ajv.addKeyword({ keyword: 'discriminator' });
  ajv.addSchema({ $id: id, components });
  return (kind, value) => {
    const validate = ajv.getSchema(`${id}#/components/schemas/${kind}`)!;
    return validate(value) ? [] : (validate.errors ?? []).map((e) => `${e.instancePath} ${e.message} ${JSON.stringify(e.params)}`);
  };
}
