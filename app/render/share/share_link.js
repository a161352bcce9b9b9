// Copy link's box: the link to the page as the address bar holds it. The steppers keep the step and view on
// screen in the address bar as they change (nothing sent to the server), so the address bar, not what the server
// last heard, is what a shared link must carry. The box follows the address bar while it is open.
function copy(text, code, button) {
  const done = () => { button.textContent = 'Copied'; };
  if (navigator.clipboard && window.isSecureContext) {
    navigator.clipboard.writeText(text).then(done, () => select(code));
    return;
  }
  select(code); // plain http on a class network: no clipboard API, the link selected for Ctrl+C
  if (document.execCommand && document.execCommand('copy')) done();
}

function select(code) {
  const range = document.createRange();
  range.selectNodeContents(code);
  const sel = window.getSelection();
  sel.removeAllRanges();
  sel.addRange(range);
}

export default function ({ data, parentElement }) {
  let root = parentElement.querySelector('.lens-share');
  if (!root) {
    root = document.createElement('div');
    root.className = 'lens-share';
    const code = document.createElement('code');
    code.className = 'lens-share-link';
    const button = document.createElement('button');
    button.type = 'button';
    button.className = 'lens-share-copy';
    button.textContent = 'Copy';
    button.addEventListener('click', () => copy(code.textContent, code, button));
    root.append(code, button);
    parentElement.appendChild(root);
  }
  const code = root.querySelector('code');
  const button = root.querySelector('button');
  const show = () => {
    const here = window.location.href;
    const link = here && here.includes('?') ? here : (data && data.link) || here;
    if (code.textContent !== link) {
      code.textContent = link;
      button.textContent = 'Copy';
    }
  };
  show();
  // The steppers change the address bar with history.replaceState, which fires the Navigation API's
  // currententrychange (Chromium, Edge, Firefox 147+); a stepper also announces it (lens-url) for other browsers.
  const nav = window.navigation;
  if (nav && nav.addEventListener) nav.addEventListener('currententrychange', show);
  window.addEventListener('lens-url', show);
  window.addEventListener('popstate', show);
  return () => {
    if (nav && nav.removeEventListener) nav.removeEventListener('currententrychange', show);
    window.removeEventListener('lens-url', show);
    window.removeEventListener('popstate', show);
  };
}
