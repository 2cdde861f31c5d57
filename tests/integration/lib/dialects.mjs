// One deployment per upstream dialect, against `m`.
export const DIALECTS = {
  openai: (m) => ({ provider: 'openai', base_url: `http://127.0.0.1:${m.port}/v1`, model: 'gpt-up' }),
  anthropic: (m) => ({ provider: 'anthropic', base_url: `http://127.0.0.1:${m.port}`, api_key: 'sk-ant-test', model: 'claude-up' }),
  gemini: (m) => ({ provider: 'gemini', base_url: `http://127.0.0.1:${m.port}`, api_key: 'g-test', model: 'gemini-up' }),
  ollama: (m) => ({ provider: 'ollama', base_url: `http://127.0.0.1:${m.port}`, model: 'llama-up' }),
  cohere: (m) => ({ provider: 'cohere', base_url: `http://127.0.0.1:${m.port}`, api_key: 'co-test', model: 'command-up' }),
  responses: (m) => ({ provider: 'openai', api: 'responses', base_url: `http://127.0.0.1:${m.port}/v1`, model: 'gpt-resp-up' }),
};
