/**
 * User groups in the Slack emulator: the workspace's groups (`S…` ids, enabled or disabled) and
 * their members, and the Web API methods that read them — `usergroups.list` (disabled groups only
 * with `include_disabled`, marked by a non-zero `date_delete`) and `usergroups.users.list`
 * (`no_such_subteam` for an id Slack does not know, and for a disabled group without `include_disabled`).
 */

/** A user group as the workspace holds it. */
export interface EmulatedUserGroup {
  id: string;
  name: string;
  handle: string;
  users: string[];
  /** Disabled groups keep their members but are left out unless a call asks for them. */
  disabled: boolean;
  createdAt: number;
}

type Args = Record<string, unknown>;
type Body = Record<string, unknown>;

/** A Web API flag as either encoding sends it: `true` in JSON, "true" or "1" in a form body. */
function flag(value: unknown): boolean {
  return value === true || value === "true" || value === "1" || value === 1;
}

/** The workspace's user groups and the two read methods over them. */
export class UserGroups {
  private readonly groups = new Map<string, EmulatedUserGroup>();
  private readonly teamId: string;
  private counter = 0;

  constructor(teamId: string) {
    this.teamId = teamId;
  }

  /** Creates a group (id `S0GROUP1`, `S0GROUP2`, … unless given) with these members. */
  create(input: { id?: string; name: string; handle?: string; users?: string[]; disabled?: boolean }): EmulatedUserGroup {
    const id = input.id ?? `S0GROUP${++this.counter}`;
    if (!/^S[A-Z0-9]+$/.test(id)) throw new Error(`a Slack user group id starts with S (got ${id})`);
    const group: EmulatedUserGroup = {
      id,
      name: input.name,
      handle: input.handle ?? input.name.toLowerCase().replace(/[^a-z0-9]+/g, "-"),
      users: [...(input.users ?? [])],
      disabled: input.disabled ?? false,
      createdAt: Math.floor(Date.now() / 1000),
    };
    this.groups.set(id, group);
    return group;
  }

  get(id: string): EmulatedUserGroup | undefined {
    return this.groups.get(id);
  }

  /** Replaces a group's members, as `usergroups.users.update` does. */
  setMembers(id: string, users: string[]): void {
    this.require(id).users = [...users];
  }

  /** Disables or re-enables a group, as `usergroups.disable` / `usergroups.enable` do. */
  setDisabled(id: string, disabled: boolean): void {
    this.require(id).disabled = disabled;
  }

  /** `usergroups.list`: enabled groups, and disabled ones too with `include_disabled`. */
  list(args: Args): { error?: string; body?: Body } {
    const withDisabled = flag(args.include_disabled);
    const withUsers = flag(args.include_users);
    const withCount = flag(args.include_count);
    const usergroups = [...this.groups.values()]
      .filter((g) => withDisabled || !g.disabled)
      .map((g) => ({
        ...this.json(g),
        ...(withUsers ? { users: [...g.users] } : {}),
        ...(withCount ? { user_count: g.users.length } : {}),
      }));
    return { body: { usergroups } };
  }

  /** `usergroups.users.list`: the member ids of one group. */
  usersList(args: Args): { error?: string; body?: Body } {
    if (typeof args.usergroup !== "string" || args.usergroup === "") return { error: "invalid_arguments" };
    const group = this.groups.get(args.usergroup);
    if (!group || (group.disabled && !flag(args.include_disabled))) return { error: "no_such_subteam" };
    return { body: { users: [...group.users] } };
  }

  private require(id: string): EmulatedUserGroup {
    const group = this.groups.get(id);
    if (!group) throw new Error(`no user group ${id} in the emulator`);
    return group;
  }

  /** The usergroup object as Slack shows it. */
  private json(g: EmulatedUserGroup): Body {
    return {
      id: g.id, team_id: this.teamId, is_usergroup: true, is_subteam: true, name: g.name, description: "", handle: g.handle,
      is_external: false, date_create: g.createdAt, date_update: g.createdAt, date_delete: g.disabled ? g.createdAt + 1 : 0,
      auto_type: null, created_by: "USLACKBOT", updated_by: "USLACKBOT", deleted_by: null, prefs: { channels: [], groups: [] },
    };
  }
}
