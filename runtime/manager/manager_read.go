package manager

import (
	"context"
	"errors"
	"fmt"

	mcpruntime "github.com/mcpgen/mcpgen/runtime"
)

// ReadResource implements mcpruntime.ResourceReader, so generated
// resource accessors and ReadLink work over a Manager's connection: the
// read goes on the server's shared session, within its call slots. A read
// changes nothing, so a failure of the connection is retried as an
// idempotent call is.
func (c *managedCaller) ReadResource(ctx context.Context, uri string) (*mcpruntime.ResourceResult, error) {
	var res *mcpruntime.ResourceResult
	err := c.s.read(ctx, fmt.Sprintf("read resource %q", uri), func(ctx context.Context, sess Session) error {
		r, ok := sess.(mcpruntime.ResourceReader)
		if !ok {
			return &PermanentError{Err: fmt.Errorf("server %q: the connector's session (%T) cannot read resources: it does not implement mcpruntime.ResourceReader", c.s.id, sess)}
		}
		var err error
		res, err = r.ReadResource(ctx, uri)
		return err
	})
	return res, err
}

// GetPrompt implements mcpruntime.PromptGetter, like ReadResource.
func (c *managedCaller) GetPrompt(ctx context.Context, name string, args map[string]string) (*mcpruntime.PromptResult, error) {
	var res *mcpruntime.PromptResult
	err := c.s.read(ctx, fmt.Sprintf("get prompt %q", name), func(ctx context.Context, sess Session) error {
		g, ok := sess.(mcpruntime.PromptGetter)
		if !ok {
			return &PermanentError{Err: fmt.Errorf("server %q: the connector's session (%T) cannot get prompts: it does not implement mcpruntime.PromptGetter", c.s.id, sess)}
		}
		var err error
		res, err = g.GetPrompt(ctx, name, args)
		return err
	})
	return res, err
}

// read runs one read on the server's session: the concurrency cap, then
// the request, retried on a lost or failed connection (never on an answer
// from the server) up to the entry's maxRetries.
func (s *server) read(ctx context.Context, what string, do func(context.Context, Session) error) error {
	sess, err := s.session(ctx)
	if err != nil {
		return err
	}
	if sem := s.semaphore(); sem != nil {
		select {
		case sem <- struct{}{}:
			defer func() { <-sem }()
		case <-ctx.Done():
			return fmt.Errorf("server %q: %s: waiting for a free call slot (maxConcurrentCalls %d): %w", s.id, what, cap(sem), context.Cause(ctx))
		}
	}
	retries := s.config().EffectiveMaxRetries()
	for attempt := 0; ; attempt++ {
		if attempt > 0 {
			if sess, err = s.session(ctx); err != nil {
				return err
			}
		}
		err = do(ctx, sess)
		if err == nil {
			return nil
		}
		s.dropIfDone(sess)
		var perm *PermanentError
		var big *mcpruntime.ResourceTooLargeError
		if ctx.Err() != nil || errors.As(err, &perm) || errors.As(err, &big) || !transportError(err) || attempt >= retries {
			if attempt > 0 {
				return fmt.Errorf("%d attempts: %w", attempt+1, namingServer(s.id, err))
			}
			return err
		}
		delay := s.m.backoff(attempt)
		s.m.retrying(ctx, attempt+1, delay, err)
		if s.m.sleep(ctx, delay) != nil {
			return err
		}
	}
}
