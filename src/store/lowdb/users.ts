/** users.json: the lookups sign-in needs, and the Users tab's view (issue 14): list, change and delete by id. */
import type { User } from '../../schemas/auth.ts';
import type { UserDirectoryRepository, UserRepository } from '../types.ts';
import type { JsonCollection } from './file.ts';

export type UsersFile = { users: User[] };

export class LowdbUsers implements UserRepository {
  readonly #file: JsonCollection<UsersFile>;
  constructor(file: JsonCollection<UsersFile>) {
    this.#file = file;
  }
  async get(id: string) {
    return this.#file.data.users.find((u) => u.id === id);
  }
  async getByUsername(username: string) {
    const wanted = username.toLowerCase();
    return this.#file.data.users.find((u) => u.username.toLowerCase() === wanted);
  }
  async count() {
    return this.#file.data.users.length;
  }
  async upsert(user: User) {
    const index = this.#file.data.users.findIndex((u) => u.username.toLowerCase() === user.username.toLowerCase());
    if (index >= 0) this.#file.data.users[index] = { ...user, id: this.#file.data.users[index]!.id };
    else this.#file.data.users.push({ ...user });
    await this.#file.write();
    return { ...this.#file.data.users[index >= 0 ? index : this.#file.data.users.length - 1]! };
  }
}

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
