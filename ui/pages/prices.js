// Prices: the price table (USD per million tokens; the built-in defaults, the config's, and
// the admin API's overrides), set and reset per model. The operator's only.
import { del, get, put } from '../api.js';
import { field, form, h, notice, show, table, usd } from '../dom.js';

async function page(main) {
  const prices = await get('/admin/v1/prices');
  const reset = (p) => (p.source !== 'admin' ? null : h('button', {
    type: 'button',
    class: 'small',
    onclick: async () => {
      await del(`/admin/v1/prices/${encodeURIComponent(p.model)}`);
      await page(main);
    },
  }, 'Reset'));
  show(main,
    h('h1', null, 'Prices'),
    notice('USD per million tokens.'),
    table([
      ['Model', (p) => p.model], ['Input', (p) => usd(p.input)], ['Cached input', (p) => usd(p.cached_input)],
      ['Cache write', (p) => usd(p.cache_write)], ['Output', (p) => usd(p.output)],
      ['Reasoning', (p) => usd(p.reasoning)], ['Max output tokens', (p) => p.max_output_tokens],
      ['Source', (p) => p.source], ['', reset],
    ], prices.data, 'No prices.'),
    form('Set a price', [
      field('Model', { name: 'model', required: true }),
      field('Input', { name: 'input', type: 'number', min: 0, step: 'any', required: true }),
      field('Output', { name: 'output', type: 'number', min: 0, step: 'any', required: true }),
      field('Max output tokens', { name: 'max_output_tokens', type: 'number', min: 1, required: true }),
    ], 'Save price', async (v) => {
      await put(`/admin/v1/prices/${encodeURIComponent(v.model)}`, {
        input: Number(v.input), output: Number(v.output), max_output_tokens: Number(v.max_output_tokens),
      });
      await page(main);
    }));
}

export async function render(main, context) {
  if (!context.operator) {
    show(main, h('h1', null, 'Prices'), notice("The price table is the operator's."));
    return;
  }
  await page(main);
}
