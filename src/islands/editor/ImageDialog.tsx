/** The visual editor's image dialog: a file uploaded through the hero image pipeline, alt text required, a caption. */
import { useState } from 'react';
import { useMutation } from '@tanstack/react-query';
import { heroImageAttributes } from '../../schemas/image.ts';
import { EditorDialog } from './EditorDialog.tsx';
import { uploadHeroImage } from './image-upload.ts';

export type InlineImage = { src: string; alt: string; caption: string; width: number; height: number };

type Props = { onInsert: (image: InlineImage) => void; onClose: () => void };

export function ImageDialog({ onInsert, onClose }: Props) {
  const [file, setFile] = useState<File | undefined>();
  const [alt, setAlt] = useState('');
  const [caption, setCaption] = useState('');
  const [error, setError] = useState<string | undefined>();
  const upload = useMutation({
    mutationFn: uploadHeroImage,
    onSuccess: (path) => {
      const { width, height } = heroImageAttributes(path);
      // The largest width is stored; readers get the srcset of every width when the page is rendered.
      onInsert({ src: path, alt: alt.trim(), caption: caption.trim(), width, height });
    },
    onError: () => setError('The image could not be uploaded. Please try again.'),
  });
  return (
    <EditorDialog
      title="Insert image"
      testId="image-dialog"
      onClose={onClose}
      onSubmit={() => {
        if (!file) return setError('Choose an image file.');
        if (!alt.trim()) return setError('Describe the image for readers who cannot see it (alt text).');
        setError(undefined);
        upload.mutate(file);
      }}
    >
      <label className="adm-field">
        <span>Image file</span>
        <input type="file" accept="image/*" data-testid="inline-image-file" onChange={(event) => setFile(event.target.files?.[0])} />
      </label>
      <label className="adm-field">
        <span>
          Alt text <span aria-hidden="true">*</span>
        </span>
        <input type="text" value={alt} required aria-required="true" onChange={(event) => setAlt(event.target.value)} />
      </label>
      <label className="adm-field">
        <span>Caption</span>
        <input type="text" value={caption} onChange={(event) => setCaption(event.target.value)} />
      </label>
      <p className={error ? 'adm-error-text' : 'adm-muted'} role={error ? 'alert' : 'status'}>
        {error ?? (upload.isPending ? 'Uploading...' : 'JPEG, PNG, WebP, AVIF or GIF, up to 10 MB. Cropped to 16:9 like hero images.')}
      </p>
      <div className="adm-actions">
        <button type="submit" className="adm-btn adm-btn-primary" disabled={upload.isPending}>
          Insert image
        </button>
        <button type="button" className="adm-btn adm-btn-outline" onClick={onClose}>
          Cancel
        </button>
      </div>
    </EditorDialog>
  );
}
