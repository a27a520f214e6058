/** The backup archive's manifest, and the internal snapshot call `npm run backup` makes to a running server. */
import { z } from './zod.ts';

export const BACKUP_FORMAT = 'meridian-backup';
/** Raised when the archive's layout changes; a restore refuses a newer one. */
export const BACKUP_FORMAT_VERSION = 1;
/** The manifest's name inside the archive: always its first entry. */
export const MANIFEST_NAME = 'meridian-backup.json';
/** The database dump's name inside an archive of the PostgreSQL store. */
export const DUMP_NAME = 'database.pgdump';

const relativePath = z
  .string()
  .min(1)
  .max(4096)
  .refine(
    (p) => !p.startsWith('/') && !p.split('/').some((part) => part === '..' || part === '.' || part === ''),
    'Expected a relative path',
  );

export const backupManifestSchema = z.object({
  format: z.literal(BACKUP_FORMAT),
  formatVersion: z.number().int().min(1),
  /** package.json's version of the code that wrote it. */
  appVersion: z.string(),
  createdAt: z.iso.datetime(),
  store: z.discriminatedUnion('kind', [
    z.object({
      kind: z.literal('lowdb'),
      /** The data folder's layout (store.json). */
      layout: z.number().int().min(1),
      storeId: z.string().optional(),
      articlesVersion: z.number().int().min(0),
      /** How long the server held writes to take the folder as one point in time (ms); absent when no server ran. */
      heldMs: z.number().min(0).optional(),
    }),
    z.object({
      kind: z.literal('postgres'),
      /** Numbers of the schema migrations the database had applied. */
      migrations: z.array(z.number().int()),
      storeId: z.string().optional(),
      articlesVersion: z.number().int().min(0),
      pgDumpMajor: z.number().int(),
      serverMajor: z.number().int(),
    }),
  ]),
  /** Every other entry of the archive: `data/...` (DATA_DIR) and, on PostgreSQL, the dump. */
  files: z.array(z.object({ path: relativePath, size: z.number().int().min(0), sha256: z.string().regex(/^[0-9a-f]{64}$/) })),
});
export type BackupManifest = z.infer<typeof backupManifestSchema>;

/** POST /api/backup/snapshot: the staging folder the server linked DATA_DIR into, for the script to archive and remove. */
export const backupSnapshotInputSchema = z.strictObject({ pid: z.number().int().positive() });
export const backupSnapshotResultSchema = z.object({
  dir: z.string(),
  files: z.array(z.object({ path: z.string(), size: z.number() })),
  heldMs: z.number().optional(),
});
export type BackupSnapshotResult = z.infer<typeof backupSnapshotResultSchema>;
