import {
  SETTING_TYPES,
  type CompetencyIo,
  type CompetencySetting,
  type ValueRange,
} from '@agent-platform/contracts';
import {
  checkKeys,
  isTable,
  pathOf,
  readBoolean,
  readString,
  readStringArray,
  typeProblem,
  type Table,
} from '../fields.ts';
import type { FileProblems } from '../problems.ts';

const SETTING_KEYS = ['key', 'label', 'description', 'type', 'default', 'values'] as const;
const IO_KEYS = ['name', 'type', 'required', 'values', 'range'] as const;

/** `settings`: operator-facing knobs; `Select` needs values, a `default` must fit the type. */
export function checkSettings(p: FileProblems, items: unknown[]): CompetencySetting[] {
  const settings: CompetencySetting[] = [];
  const seen = new Set<string>();
  items.forEach((item, i) => {
    const at = pathOf('settings', i);
    if (!isTable(item)) return typeProblem(p, at, 'a table', item);
    checkKeys(p, item, SETTING_KEYS, at);
    const key = readString(p, item, 'key', at, { required: true, nonBlank: true });
    const label = readString(p, item, 'label', at, { required: true, nonBlank: true });
    const description = readString(p, item, 'description', at);
    const type = readSettingType(p, item, at);
    const values = item.values === undefined ? undefined : readStringArray(p, item, 'values', at);
    if (key !== undefined && seen.has(key))
      p.add(pathOf(at, 'key'), 'duplicate-key', `setting key '${key}' appears more than once`);
    if (key !== undefined) seen.add(key);
    if (type === 'Select' && (values === undefined || values.length === 0)) {
      p.add(pathOf(at, 'values'), 'select-values', 'a Select setting needs a non-empty values list');
    }
    if (item.default !== undefined && type !== undefined)
      checkDefault(p, item.default, type, values, pathOf(at, 'default'));
    if (key === undefined || label === undefined || type === undefined) return;
    const setting: CompetencySetting = { key, label, type };
    if (description !== undefined) setting.description = description;
    if (values !== undefined) setting.values = values;
    if (
      typeof item.default === 'string' ||
      typeof item.default === 'number' ||
      typeof item.default === 'boolean'
    )
      setting.default = item.default;
    settings.push(setting);
  });
  return settings;
}

function readSettingType(p: FileProblems, item: Table, at: string): CompetencySetting['type'] | undefined {
  const type = readString(p, item, 'type', at, { required: true });
  if (type === undefined) return undefined;
  if ((SETTING_TYPES as readonly string[]).includes(type)) return type as CompetencySetting['type'];
  p.add(
    pathOf(at, 'type'),
    'setting-type',
    `must be one of ${SETTING_TYPES.join(', ')} (got ${JSON.stringify(type.slice(0, 40))})`,
  );
  return undefined;
}

function checkDefault(
  p: FileProblems,
  value: unknown,
  type: CompetencySetting['type'],
  values: string[] | undefined,
  field: string,
): void {
  const expected = { Select: 'string', Text: 'string', Toggle: 'boolean', Number: 'number' }[type];
  if (typeof value !== expected) {
    p.add(field, 'setting-default', `the default of a ${type} setting must be a ${expected}`);
  } else if (
    type === 'Select' &&
    values !== undefined &&
    values.length > 0 &&
    !values.includes(value as string)
  ) {
    p.add(field, 'setting-default', 'the default of a Select setting must be one of its values');
  }
}

/** `inputs` / `outputs`: `{name, type, required?, values?, range?}`, names unique per list. */
export function checkIoItems(p: FileProblems, items: unknown[], list: 'inputs' | 'outputs'): CompetencyIo[] {
  const out: CompetencyIo[] = [];
  const seen = new Set<string>();
  items.forEach((item, i) => {
    const at = pathOf(list, i);
    if (!isTable(item)) return typeProblem(p, at, 'a table', item);
    checkKeys(p, item, IO_KEYS, at);
    const name = readString(p, item, 'name', at, { required: true, nonBlank: true });
    const type = readString(p, item, 'type', at, { required: true, nonBlank: true });
    const required = readBoolean(p, item, 'required', at);
    const values = item.values === undefined ? undefined : readStringArray(p, item, 'values', at);
    const range = item.range === undefined ? undefined : checkRange(p, item.range, pathOf(at, 'range'));
    if (name !== undefined && seen.has(name))
      p.add(pathOf(at, 'name'), 'duplicate-name', `'${name}' appears more than once in ${list}`);
    if (name !== undefined) seen.add(name);
    if (name === undefined || type === undefined) return;
    const io: CompetencyIo = { name, type };
    if (required !== undefined) io.required = required;
    if (values !== undefined) io.values = values;
    if (range !== undefined) io.range = range;
    out.push(io);
  });
  return out;
}

/** `range` is `{min, max}` (either may be left out) or a `[min, max]` pair; min must not exceed max. */
function checkRange(p: FileProblems, value: unknown, field: string): ValueRange | undefined {
  let range: ValueRange | undefined;
  if (Array.isArray(value) && value.length === 2 && value.every((n) => typeof n === 'number')) {
    range = { min: value[0] as number, max: value[1] as number };
  } else if (
    isTable(value) &&
    Object.keys(value).length > 0 &&
    Object.keys(value).every((k) => k === 'min' || k === 'max')
  ) {
    if (Object.values(value).every((n) => typeof n === 'number')) range = value;
  }
  if (range === undefined) {
    p.add(field, 'range', 'must be {min, max} (numbers, either optional) or a [min, max] pair');
    return undefined;
  }
  if (range.min !== undefined && range.max !== undefined && range.min > range.max) {
    p.add(field, 'range', `min (${range.min}) must not be greater than max (${range.max})`);
    return undefined;
  }
  return range;
}
