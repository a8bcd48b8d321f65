/** Value shapes every repository shares: a leaf, so the repository type files import it and not each other. */

export type JsonObject = { [key: string]: unknown };

export interface Page<T> {
  items: T[];
  hasMore: boolean;
}
