// The contract's types under short names, for code that uses the records without the client.
import type { components } from '../generated/api.js';

export type { components, operations, paths } from '../generated/api.js';

type Schemas = components['schemas'];
export type ActionWorkflow = Schemas['ActionWorkflow'];
export type APIError = Schemas['APIError'];
export type APINotFound = Schemas['APINotFound'];
export type Attachment = Schemas['Attachment'];
export type DeployKey = Schemas['DeployKey'];
export type GPGKey = Schemas['GPGKey'];
export type Hook = Schemas['Hook'];
export type Issue = Schemas['Issue'];
export type IssuePayload = Schemas['IssuePayload'];
export type Label = Schemas['Label'];
export type Milestone = Schemas['Milestone'];
export type NotificationThread = Schemas['NotificationThread'];
export type OAuth2Application = Schemas['OAuth2Application'];
export type Organization = Schemas['Organization'];
export type Package = Schemas['Package'];
export type PullRequest = Schemas['PullRequest'];
export type PullRequestPayload = Schemas['PullRequestPayload'];
export type Repository = Schemas['Repository'];
export type RepositoryPayload = Schemas['RepositoryPayload'];
export type Team = Schemas['Team'];
export type User = Schemas['User'];
export type EditHookOption = Schemas['EditHookOption'];
export type CreateOAuth2ApplicationOptions = Schemas['CreateOAuth2ApplicationOptions'];
export type MigrateRepoOptions = Schemas['MigrateRepoOptions'];
export type EditPullRequestOption = Schemas['EditPullRequestOption'];
export type EditLabelOption = Schemas['EditLabelOption'];
export type EditMilestoneOption = Schemas['EditMilestoneOption'];
export type MarkdownOption = Schemas['MarkdownOption'];
