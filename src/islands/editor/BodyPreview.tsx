/** Live preview of the body HTML in a sandboxed frame: no scripts run, whatever is typed or pasted. */
import { useDeferredValue } from 'react';

// The frame inherits the page's CSP, which allows no inline <style> or style attribute: the styles are a file.
const PREVIEW_HEAD = '<!doctype html><meta charset="utf-8"><link rel="stylesheet" href="/editor-preview.css">';

export function BodyPreview({ html }: { html: string }) {
  const deferred = useDeferredValue(html);
  return (
    <div className="adm-field">
      <span>Preview</span>
      <iframe
        className="adm-preview"
        title="Article body preview"
        sandbox=""
        srcDoc={`${PREVIEW_HEAD}${deferred || '<p class="preview-placeholder">The body preview appears here.</p>'}`}
      />
    </div>
  );
}
