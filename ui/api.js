// The admin API as the pages call it. The session cookie goes with every same-origin request;
// a write (POST, PUT, PATCH, DELETE) also sends the session's CSRF token, without which the
// admin API refuses a cookie-authenticated write (403). Every answer is JSON.

let csrfToken = '';

export function setCsrfToken(token) {
  csrfToken = token;
}

export class ApiError extends Error {
  constructor(status, message, field) {
    super(message);
    this.status = status;
    this.field = field;
  }
}

export async function call(method, path, body) {
  const headers = { accept: 'application/json' };
  if (method !== 'GET') headers['x-csrf-token'] = csrfToken;
  const init = { method, headers, credentials: 'same-origin' };
  if (body !== undefined) {
    headers['content-type'] = 'application/json';
    init.body = JSON.stringify(body);
  }
  const response = await fetch(path, init);
  const data = await response.json().catch(() => null);
  if (!response.ok) {
    const error = data && data.error ? data.error : {};
    throw new ApiError(response.status, error.message || response.statusText, error.field);
  }
  return data;
}

export const get = (path) => call('GET', path);
export const post = (path, body) => call('POST', path, body === undefined ? {} : body);
export const put = (path, body) => call('PUT', path, body);
export const patch = (path, body) => call('PATCH', path, body);
export const del = (path) => call('DELETE', path);

// A query string from the non-empty values of `params`.
export function query(params) {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) {
    if (v !== undefined && v !== null && v !== '') q.set(k, String(v));
  }
  const text = q.toString();
  return text ? `?${text}` : '';
}

// The admin API's route patterns on this gateway (from the session answer): which doors are
// configured, so that a page never calls a route that would answer 404.
let patterns = [];
export function setAdminRoutes(list) {
  patterns = list || [];
}
export function hasRoute(pattern) {
  return patterns.includes(pattern);
}
