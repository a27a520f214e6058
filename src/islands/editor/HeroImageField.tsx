/** Hero Image card: image picker with upload progress, then a preview with a remove button. */
import { useRef } from 'react';
import { useMutation } from '@tanstack/react-query';
import { heroImageAttributes } from '../../schemas/image.ts';
import { toast } from '../toast/toast-store.ts';
import { uploadHeroImage } from './image-upload.ts';

type Props = { heroImage: string; onChange: (heroImage: string) => void; disabled?: boolean };

export function HeroImageField({ heroImage, onChange, disabled = false }: Props) {
  const inputRef = useRef<HTMLInputElement>(null);
  const upload = useMutation({
    mutationFn: uploadHeroImage,
    onSuccess: (path) => {
      onChange(path);
      toast({ title: 'Image uploaded', description: 'Hero image uploaded successfully.' });
    },
    onError: () => toast({ title: 'Upload failed', description: 'Failed to upload image. Please try again.', variant: 'destructive' }),
    onSettled: () => {
      // Choosing the same file again must fire a change event.
      if (inputRef.current) inputRef.current.value = '';
    },
  });

  const image = heroImage ? heroImageAttributes(heroImage) : undefined;

  return (
    <section className="adm-card" aria-labelledby="hero-heading">
      <h2 id="hero-heading" className="adm-card-title">
        Hero Image
      </h2>
      {image ? (
        <figure className="adm-hero-preview">
          <img
            src={image.src}
            srcSet={image.srcset}
            sizes="(max-width: 900px) 100vw, 640px"
            width={image.width}
            height={image.height}
            alt="The chosen hero, as readers will see it"
            data-testid="hero-preview"
          />
          <button
            type="button"
            className="adm-btn adm-btn-danger adm-btn-sm adm-hero-remove"
            onClick={() => onChange('')}
            disabled={disabled}
          >
            Remove image
          </button>
        </figure>
      ) : (
        <label className={`adm-dropzone${upload.isPending ? ' adm-dropzone-busy' : ''}`}>
          <input
            ref={inputRef}
            type="file"
            accept="image/*"
            className="adm-sr-only"
            disabled={upload.isPending || disabled}
            data-testid="hero-file-input"
            onChange={(event) => {
              const file = event.target.files?.[0];
              if (file) upload.mutate(file);
            }}
          />
          <span aria-live="polite">{upload.isPending ? 'Uploading...' : 'Click to upload hero image'}</span>
          <span className="adm-muted">JPEG, PNG, WebP, AVIF or GIF, up to 10 MB</span>
        </label>
      )}
    </section>
  );
}
