// issue: issueRemoveAssignees, issueEditMilestone, issueListIssueCommentAttachments.
import { describeContract } from './support/contract.js';

const repo = { owner: 'acme', repo: 'rocket' };

describeContract('issue', {
  issueRemoveAssignees: {
    call: (client, extra) =>
      client.DELETE('/repos/{owner}/{repo}/issues/{index}/assignees', {
        params: { path: { ...repo, index: 42 } },
        body: { assignees: ['bob'] },
        ...extra,
      }),
    invalid: {
      'assignees that are not names': (client) =>
        client.DELETE('/repos/{owner}/{repo}/issues/{index}/assignees', {
          params: { path: { ...repo, index: 42 } },
          body: { assignees: [1001] as never },
        }),
    },
  },
  issueEditMilestone: {
    call: (client, extra) =>
      client.PATCH('/repos/{owner}/{repo}/milestones/{id}', {
        params: { path: { ...repo, id: '6001' } },
        body: { state: 'closed', due_on: '2026-05-01T00:00:00Z' },
        ...extra,
      }),
    invalid: {
      'an unknown state': (client) =>
        client.PATCH('/repos/{owner}/{repo}/milestones/{id}', {
          params: { path: { ...repo, id: 'v1.2.0' } },
          body: { state: 'archived' as never },
        }),
      'a due date that is not a date-time': (client) =>
        client.PATCH('/repos/{owner}/{repo}/milestones/{id}', {
          params: { path: { ...repo, id: '6001' } },
          body: { due_on: 'next Tuesday' },
        }),
    },
  },
  issueListIssueCommentAttachments: {
    call: (client, extra) =>
      client.GET('/repos/{owner}/{repo}/issues/comments/{id}/assets', {
        params: { path: { ...repo, id: 15001 } },
        ...extra,
      }),
    // The server refuses no value of its parameters (`x-lenient`): contract-tests/as-the-server.test.ts
    // holds what it answers instead; Prefer asks for the rest.
    invalid: {},
  },
});
