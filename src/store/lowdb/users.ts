/** The Users tab's view of users.json (issue 14): list, change and delete by id, beside the basic lookups. */
import type { User } from '../../schemas/auth.ts';
import type { UserDirectoryRepository } from '../types.ts';
import type { JsonCollection } from './file.ts';
import { LowdbUsers, type UsersFile } from './collections.ts';

export class LowdbUserDirectory extends LowdbUsers implements UserDirectoryRepository {
  readonly #file: JsonCollection<UsersFile>;
  constructor(file: JsonCollection<UsersFile>) {
    super(file);
    this.#file = file;
  }
  async list() {
    return this.#file.data.users.map((u) => ({ ...u }));
  }
  async update(id: string, change: Partial<Omit<User, 'id' | 'username'>>) {
    const index = this.#file.data.users.findIndex((u) => u.id === id);
    if (index < 0) return undefined;
    const next: User = { ...this.#file.data.users[index]! };
    for (const [key, value] of Object.entries(change)) {
      if (value === undefined) delete (next as Record<string, unknown>)[key];
      else (next as Record<string, unknown>)[key] = value;
    }
    this.#file.data.users[index] = next;
    await this.#file.write();
    return { ...next };
  }
  async delete(id: string) {
    const index = this.#file.data.users.findIndex((u) => u.id === id);
    if (index < 0) return false;
    this.#file.data.users.splice(index, 1);
    await this.#file.write();
    return true;
  }
}
