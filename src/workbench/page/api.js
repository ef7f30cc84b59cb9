// spoolparse correction workbench: the JSON API as the page calls it, the token it may need,
// and the banners that report errors and notices. Loaded before workbench.js, which owns the
// state these functions read.
'use strict';

// ---------------------------------------------------------------- API

class ApiError extends Error {
  constructor(status, message) {
    super(message);
    this.status = status;
  }
}

function setPending(delta) {
  state.pending += delta;
  document.body.dataset.pending = String(state.pending);
}

// One JSON request. A 401 asks for a token (once for all the requests waiting) and tries
// again; any other failure throws an ApiError with the server's own message. A POST always
// carries a JSON body: the server obeys no other (a foreign page could send one).
async function api(method, path, body) {
  if (method === 'POST' && body === undefined) body = {};
  setPending(1);
  try {
    for (;;) {
      const headers = { Accept: 'application/json' };
      if (body !== undefined) headers['Content-Type'] = 'application/json';
      if (state.token) headers.Authorization = `Bearer ${state.token}`;
      let response;
      try {
        response = await fetch(path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
      } catch (e) {
        throw new ApiError(0, `${method} ${path}: the server cannot be reached (${e.message})`);
      }
      if (response.status === 401) {
        await askToken(state.token ? 'The token was refused: enter it again.' : '');
        continue;
      }
      if (response.status === 204) return null;
      const text = await response.text();
      let data = {};
      try {
        data = text ? JSON.parse(text) : {};
      } catch (e) {
        if (response.ok) throw new ApiError(response.status, `${method} ${path}: the answer is not JSON`);
      }
      if (!response.ok) {
        const message = data && data.error ? data.error : text || response.statusText;
        throw new ApiError(response.status, `${method} ${path} (${response.status}): ${message}`);
      }
      return data;
    }
  } finally {
    setPending(-1);
  }
}

// Shows the token form; resolves when a token is entered. Kept for the tab (sessionStorage).
function askToken(message) {
  if (!state.tokenPrompt) {
    state.tokenPrompt = new Promise((resolve) => {
      $('#auth-message').textContent = message;
      $('#auth').hidden = false;
      $('#auth-token').value = '';
      $('#auth-token').focus();
      $('#auth-form').onsubmit = (event) => {
        event.preventDefault();
        state.token = $('#auth-token').value.trim();
        sessionStorage.setItem(TOKEN_KEY, state.token);
        $('#auth').hidden = true;
        state.tokenPrompt = null;
        resolve();
      };
    });
  }
  return state.tokenPrompt;
}

// Runs an action, showing its error (never swallowed). Returns the action's result or undefined.
async function attempt(action) {
  try {
    return await action();
  } catch (e) {
    showError(e.message || String(e));
    return undefined;
  }
}

function showError(message) {
  $('#error-text').textContent = message;
  $('#error').hidden = false;
}

let noticeTimer = null;
function showNotice(message) {
  const notice = $('#notice');
  notice.textContent = message;
  notice.hidden = false;
  clearTimeout(noticeTimer);
  noticeTimer = setTimeout(() => { notice.hidden = true; }, 4000);
}
