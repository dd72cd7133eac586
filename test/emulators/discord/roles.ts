/**
 * Server roles in the Discord emulator beyond @everyone and the bot's managed role: roles a test
 * creates (with their permission bits), which members hold them, the member object
 * (`GET /guilds/:guild/members/:user`, `member` in messages and interactions) and the permissions
 * Discord computes for a member from its roles — Administrator (0x8) grants every permission.
 */
import type { EmuUser } from "./state.ts";

/** The permission bits of @everyone in the emulated server (no Administrator). */
export const EVERYONE_PERMISSIONS = 1071698660929n;
/** Discord's Administrator permission bit. */
export const ADMINISTRATOR = 0x8n;
/** Every permission bit Discord defines today, as an Administrator's computed permissions show them. */
const ALL_PERMISSIONS = (1n << 51n) - 1n;

/** A role a test created. */
export interface EmuRole {
  id: string;
  name: string;
  permissions: bigint;
  position: number;
}

/** The server's extra roles and who holds them. */
export class GuildRoles {
  readonly roles = new Map<string, EmuRole>();
  private readonly held = new Map<string, Set<string>>();
  private readonly newId: () => string;

  constructor(newId: () => string) {
    this.newId = newId;
  }

  /** Creates a role; its position is above every role made before it. */
  create(name: string, permissions: bigint): EmuRole {
    const role = { id: this.newId(), name, permissions, position: this.roles.size + 2 };
    this.roles.set(role.id, role);
    return role;
  }

  /** Gives `userId` the role (which must exist). */
  assign(userId: string, roleId: string): void {
    if (!this.roles.has(roleId)) throw new Error(`no role ${roleId} in the emulator`);
    const roles = this.held.get(userId) ?? new Set<string>();
    roles.add(roleId);
    this.held.set(userId, roles);
  }

  /** Takes the role away from `userId`. */
  unassign(userId: string, roleId: string): void {
    this.held.get(userId)?.delete(roleId);
  }

  /** The ids of the roles `userId` holds (as `member.roles` lists them: @everyone left out). */
  of(userId: string): string[] {
    return [...(this.held.get(userId) ?? [])];
  }

  /** The member's permissions as Discord computes them: @everyone's bits and every role's, all of them for an Administrator. */
  permissionsOf(userId: string): string {
    let bits = EVERYONE_PERMISSIONS;
    for (const id of this.of(userId)) bits |= this.roles.get(id)?.permissions ?? 0n;
    return String(bits & ADMINISTRATOR ? ALL_PERMISSIONS : bits);
  }

  /** A role as the API and the gateway show it. */
  json(role: EmuRole): Record<string, unknown> & { id: string } {
    return {
      id: role.id, name: role.name, color: 0, hoist: false, icon: null, unicode_emoji: null, position: role.position,
      permissions: String(role.permissions), managed: false, mentionable: false, flags: 0,
    };
  }

  /** The guild member object of `user` holding `roles` (`GET /guilds/:guild/members/:user`: no computed permissions there). */
  memberJson(user: EmuUser, roles: string[]): Record<string, unknown> {
    return {
      user, nick: null, avatar: null, banner: null, roles, joined_at: new Date(0).toISOString(), premium_since: null,
      deaf: false, mute: false, flags: 0, pending: false, communication_disabled_until: null,
    };
  }
}
