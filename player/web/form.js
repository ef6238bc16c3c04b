// Forms generated from the player's normalized schema fields (player.Field, built by the
// host from a tool's argumentsSchema). The form only collects values; the host validates
// them with the app's own validator and the messages come back by path ("$.a.b", "$[2]",
// '$["odd name"]'), which is how each field is addressed here too.

import { h } from './util.js';

let uid = 0;

// childPath follows the validator's path syntax.
export function childPath(parent, name) {
  return /^[A-Za-z_$][A-Za-z0-9_$]*$/.test(name) ? `${parent}.${name}` : `${parent}[${JSON.stringify(name)}]`;
}

function humanize(name) {
  const s = name.replace(/([a-z0-9])([A-Z])/g, '$1 $2').replace(/[_-]+/g, ' ');
  return s.charAt(0).toUpperCase() + s.slice(1);
}

// buildForm returns { el, collect(), set(value), showViolations(list) }. collect gives
// { value, problems }: problems are what the form itself can tell (text that is not
// JSON, a number that is not one) before asking the host.
export function buildForm(field, { onChange = () => {} } = {}) {
  const ctx = { slots: new Map(), onChange, dropped: [] };
  const root = control(field, '$', ctx, { root: true, required: true });
  const el = h('div.form', root.el);
  return {
    el,
    collect() {
      const problems = [];
      let value = root.get(problems);
      if (value === undefined) value = {};
      return { value, problems };
    },
    set(v) {
      ctx.dropped = [];
      root.set(v);
      return ctx.dropped;
    },
    showViolations(list) {
      for (const slot of ctx.slots.values()) { slot.textContent = ''; slot.parentElement?.classList.remove('invalid'); }
      const unplaced = [];
      for (const v of list) {
        let p = v.path || '$', slot;
        while (!(slot = ctx.slots.get(p)) && p !== '$') p = parentPath(p);
        if (!slot) {
          unplaced.push(v);
          continue;
        }
        slot.append(h('div', p === v.path ? v.message : `${v.path}: ${v.message}`));
        slot.parentElement?.classList.add('invalid');
      }
      return unplaced;
    },
  };
}

function parentPath(p) {
  const m = /^(.*)(\.[A-Za-z_$][A-Za-z0-9_$]*|\[[^\]]*\])$/.exec(p);
  return m && m[1] ? m[1] : '$';
}

function hint(f) {
  const bits = [];
  const range = (lo, hi, xlo, xhi) => {
    if (lo !== undefined && hi !== undefined) bits.push(`${lo}–${hi}`);
    else if (lo !== undefined) bits.push(`≥ ${lo}`);
    else if (hi !== undefined) bits.push(`≤ ${hi}`);
    if (xlo !== undefined) bits.push(`> ${xlo}`);
    if (xhi !== undefined) bits.push(`< ${xhi}`);
  };
  switch (f.kind) {
    case 'string':
      if (f.minLength !== undefined || f.maxLength !== undefined) {
        bits.push(f.minLength !== undefined && f.maxLength !== undefined ? `${f.minLength}–${f.maxLength} chars`
          : f.maxLength !== undefined ? `≤ ${f.maxLength} chars` : `≥ ${f.minLength} chars`);
      }
      if (f.format) bits.push(f.format);
      if (f.pattern) bits.push(`/${f.pattern}/`);
      break;
    case 'integer': case 'number':
      range(f.minimum, f.maximum, f.exclusiveMinimum, f.exclusiveMaximum);
      if (f.multipleOf !== undefined) bits.push(`× ${f.multipleOf}`);
      break;
    case 'array':
      if (f.minItems !== undefined || f.maxItems !== undefined) bits.push(`${f.minItems ?? 0}–${f.maxItems ?? '∞'} items`);
      break;
  }
  return bits;
}

function defaultText(f) {
  return f.default === undefined ? '' : 'default: ' + (typeof f.default === 'string' ? f.default : JSON.stringify(f.default));
}

// control builds the input for one field at path.
function control(f, path, ctx, { name, required, root, arrayItem }) {
  const id = 'f' + (++uid);
  const title = f.title || (name !== undefined ? humanize(name) : '');
  const slot = h('div.err', { role: 'alert', 'aria-live': 'polite' });
  ctx.slots.set(path, slot);
  const changed = () => ctx.onChange();
  let input, get, set;

  switch (f.kind) {
    case 'object': return objectControl(f, path, ctx, { title, required, root, slot, arrayItem });
    case 'array': return arrayControl(f, path, ctx, { title, required, slot });
    case 'string':
      input = f.multiline ? h('textarea', { id, name: path, rows: 4 }) : h('input', { id, name: path, type: 'text', autocomplete: 'off', spellcheck: 'false' });
      input.placeholder = defaultText(f);
      get = () => (input.value === '' ? undefined : input.value);
      set = (v) => { input.value = v === undefined || v === null ? '' : typeof v === 'string' ? v : JSON.stringify(v); };
      break;
    case 'integer': case 'number':
      input = h('input', { id, name: path, type: 'text', inputmode: f.kind === 'integer' ? 'numeric' : 'decimal', autocomplete: 'off' });
      input.placeholder = defaultText(f);
      get = (problems) => {
        const s = input.value.trim();
        if (s === '') return undefined;
        const n = Number(s);
        if (!Number.isFinite(n)) {
          problems.push({ path, code: 'type_mismatch', message: `"${s}" is not a number` });
          return undefined;
        }
        return n;
      };
      set = (v) => { input.value = v === undefined || v === null ? '' : String(v); };
      break;
    case 'boolean':
      if (required) {
        input = h('input', { id, name: path, type: 'checkbox' });
        get = () => input.checked;
        set = (v) => { input.checked = v === true; };
      } else {
        input = h('select', { id, name: path },
          h('option', { value: '' }, '—' + (f.default !== undefined ? ' (' + defaultText(f) + ')' : '')),
          h('option', { value: 'true' }, 'true'), h('option', { value: 'false' }, 'false'));
        get = () => (input.value === '' ? undefined : input.value === 'true');
        set = (v) => { input.value = v === true ? 'true' : v === false ? 'false' : ''; };
      }
      break;
    case 'enum': {
      const opts = f.enum.map((v, i) => h('option', { value: String(i) }, typeof v === 'string' ? v : JSON.stringify(v)));
      const blank = required && f.enum.length === 1 ? null : h('option', { value: '' }, '—' + (f.default !== undefined ? ' (' + defaultText(f) + ')' : ''));
      input = h('select', { id, name: path }, blank, opts);
      get = () => (input.value === '' ? undefined : f.enum[Number(input.value)]);
      set = (v) => {
        const i = f.enum.findIndex((x) => JSON.stringify(x) === JSON.stringify(v));
        input.value = i >= 0 ? String(i) : '';
      };
      break;
    }
    default: { // json
      input = h('textarea.code', { id, name: path, rows: 3, spellcheck: 'false' });
      input.placeholder = 'JSON' + (f.default !== undefined ? ' — ' + defaultText(f) : '');
      get = (problems) => {
        const s = input.value.trim();
        if (s === '') return undefined;
        try { return JSON.parse(s); } catch (e) {
          problems.push({ path, code: 'invalid_json', message: 'not valid JSON: ' + e.message });
          return undefined;
        }
      };
      set = (v) => { input.value = v === undefined ? '' : JSON.stringify(v, null, 2); };
    }
  }
  input.addEventListener('input', changed);
  input.addEventListener('change', changed);
  const meta = hint(f);
  const el = h('div.field', { dataset: { path, kind: f.kind } },
    h('label', { for: id },
      h('span.name', title || (arrayItem ? '' : path)), required && !arrayItem ? h('span.req', { title: 'required' }, '*') : null,
      h('span.type', f.kind === 'json' ? 'JSON' : f.kind), meta.length ? h('span.hint', meta.join(' · ')) : null),
    f.description ? h('div.desc', f.description) : null,
    f.kind === 'json' && f.reason ? h('div.desc.muted', 'Edited as JSON: ' + f.reason + '.') : null,
    input, slot);
  return { el, get, set, input };
}

function objectControl(f, path, ctx, { title, required, root, slot, arrayItem }) {
  const children = (f.properties || []).map((p) => ({
    name: p.name,
    c: control(p.field, childPath(path, p.name), ctx, { name: p.name, required: p.required }),
  }));
  const body = children.map((x) => x.c.el);
  let el;
  if (root) {
    el = h('div.object.root', { dataset: { path } },
      children.length ? body : h('p.muted', 'This tool takes no arguments.'),
      f.open ? h('p.muted', 'Other members are allowed too: add them in the JSON editor.') : null, slot);
  } else {
    el = h('fieldset.object', { dataset: { path, kind: 'object' } },
      h('legend', title || '', required && !arrayItem ? h('span.req', '*') : null),
      f.description ? h('div.desc', f.description) : null, body, slot);
  }
  return {
    el,
    get(problems) {
      const out = {};
      let any = false;
      for (const { name, c } of children) {
        const v = c.get(problems);
        if (v !== undefined) { out[name] = v; any = true; }
      }
      return any || required || root ? out : undefined;
    },
    set(v) {
      const obj = v && typeof v === 'object' && !Array.isArray(v) ? v : {};
      for (const { name, c } of children) c.set(obj[name]);
      for (const k of Object.keys(obj)) {
        if (!children.some((x) => x.name === k)) ctx.dropped.push(childPath(path, k));
      }
    },
  };
}

function arrayControl(f, path, ctx, { title, required, slot }) {
  const list = h('div.items');
  let items = [];
  const add = (v) => {
    const i = items.length;
    const c = control(f.items, `${path}[${i}]`, ctx, { name: `${title || 'item'} ${i + 1}`, required: true, arrayItem: true });
    const remove = h('button.small.ghost', { type: 'button', title: 'Remove this item', 'aria-label': 'Remove item ' + (i + 1) }, '✕');
    remove.addEventListener('click', () => {
      const values = items.map((x) => x.c.get([]));
      values.splice(i, 1);
      rebuild(values);
      ctx.onChange();
    });
    const row = h('div.item', h('span.idx', String(i)), h('div.item-body', c.el), remove);
    list.append(row);
    items.push({ c, row });
    if (v !== undefined) c.set(v);
  };
  const rebuild = (values) => {
    for (let i = 0; i < items.length; i++) ctx.slots.delete(`${path}[${i}]`);
    items = [];
    list.textContent = '';
    values.forEach((v) => add(v));
  };
  const addBtn = h('button.small', { type: 'button' }, '+ Add item');
  addBtn.addEventListener('click', () => { add(); ctx.onChange(); items.at(-1)?.c.el.querySelector('input,select,textarea')?.focus(); });
  const meta = hint(f);
  const el = h('fieldset.array', { dataset: { path, kind: 'array' } },
    h('legend', title || '', required ? h('span.req', '*') : null, meta.length ? h('span.hint', meta.join(' · ')) : null),
    f.description ? h('div.desc', f.description) : null, list, addBtn, slot);
  return {
    el,
    get(problems) {
      if (!items.length) return required ? [] : undefined;
      return items.map((x) => {
        const v = x.c.get(problems);
        return v === undefined ? null : v;
      });
    },
    set(v) { rebuild(Array.isArray(v) ? v : []); },
  };
}
